# Shell helpers shared by the install scripts (sourced, not run): Debian packages on demand and
# Maven artifacts copied out of ~/.m2 into project-local directories.

# need_tool COMMAND PACKAGE: installs the Debian PACKAGE when COMMAND is missing.
need_tool() {
  command -v "$1" >/dev/null 2>&1 && return 0
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$2"
}

# jdk_major JAVA_HOME: the major version of the JDK there (nothing when it is not a JDK).
jdk_major() {
  [ -x "$1/bin/java" ] || return 0
  "$1/bin/java" -XshowSettings:properties -version 2>&1 |
    sed -n 's/^ *java.specification.version = //p' | cut -d. -f1
}

# artifact_file_name G:A:V[:type[:classifier]]: the file name dependency:copy writes.
artifact_file_name() {
  local IFS=':'
  local _group artifact version type classifier
  read -r _group artifact version type classifier <<<"$1"
  echo "$artifact-$version${classifier:+-$classifier}.${type:-jar}"
}

# maven_copy DIR COORDINATE...: copies each artifact into DIR through Maven's ordinary client,
# skipping those already there.
maven_copy() {
  local dir="$1"
  shift
  mkdir -p "$dir"
  local coordinate name output
  for coordinate in "$@"; do
    name="$(artifact_file_name "$coordinate")"
    [ -s "$dir/$name" ] && continue
    echo "fetching $coordinate"
    if ! output="$(mvn -B -q -Dstyle.color=never dependency:copy -Dartifact="$coordinate" \
                     -DoutputDirectory="$dir" -Dmdep.overWriteReleases=true 2>&1)"; then
      echo "$output" >&2
      return 1
    fi
    [ -s "$dir/$name" ] || { echo "missing $dir/$name after fetch" >&2; return 1; }
  done
}
