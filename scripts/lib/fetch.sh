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

# maven_pom COORDINATE...: a throwaway POM that depends on exactly these artifacts, each without
# its transitive dependencies (the callers list every jar they need).
maven_pom() {
  local coordinate group artifact version type classifier
  echo '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
  echo '<groupId>serac.local</groupId><artifactId>fetch</artifactId><version>0</version>'
  echo '<packaging>pom</packaging><dependencies>'
  for coordinate in "$@"; do
    IFS=':' read -r group artifact version type classifier <<<"$coordinate"
    echo "<dependency><groupId>$group</groupId><artifactId>$artifact</artifactId>"
    echo "<version>$version</version><type>${type:-jar}</type>${classifier:+<classifier>$classifier</classifier>}"
    echo '<exclusions><exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion></exclusions>'
    echo '</dependency>'
  done
  echo '</dependencies></project>'
}

# prune_jars DIR COORDINATE...: removes the jars in DIR that none of the coordinates names (what an
# earlier version of a script fetched), so a class path built from DIR holds no stale version.
prune_jars() {
  local dir="$1" coordinate jar wanted=" "
  shift
  for coordinate in "$@"; do
    wanted+="$(artifact_file_name "$coordinate") "
  done
  for jar in "$dir"/*.jar; do
    [ -e "$jar" ] || continue
    case "$wanted" in *" $(basename "$jar") "*) ;; *) rm -f "$jar" ;; esac
  done
}

# maven_copy DIR COORDINATE...: copies each artifact into DIR through Maven's ordinary client,
# skipping those already there. The missing ones are fetched by one Maven run over a throwaway POM
# (one JVM start instead of one per artifact: a fresh clone needs some fifty jars).
maven_copy() {
  local dir="$1"
  shift
  mkdir -p "$dir"
  local coordinate name missing=() seen=" "
  for coordinate in "$@"; do
    name="$(artifact_file_name "$coordinate")"
    [ -s "$dir/$name" ] && continue
    case "$seen" in *" $name "*) continue ;; esac
    seen+="$name "
    missing+=("$coordinate")
  done
  [ "${#missing[@]}" -gt 0 ] || return 0
  printf 'fetching %s\n' "${missing[@]}"
  local work output status=0
  work="$(mktemp -d)"
  maven_pom "${missing[@]}" >"$work/pom.xml"
  output="$(mvn -B -q -Dstyle.color=never -f "$work/pom.xml" dependency:copy-dependencies \
              -DoutputDirectory="$dir" -Dmdep.overWriteReleases=true 2>&1)" || status=$?
  rm -rf "$work"
  if [ "$status" -ne 0 ]; then
    echo "$output" >&2
    return 1
  fi
  for coordinate in "${missing[@]}"; do
    name="$(artifact_file_name "$coordinate")"
    [ -s "$dir/$name" ] || { echo "missing $dir/$name after fetch" >&2; return 1; }
  done
}
