// Serves the Iceberg reference REST catalog (the RESTCatalogAdapter from the iceberg-core test
// jar behind Jetty 12, as in the iceberg-open-api test fixtures) on a loopback address only. The
// stock RESTCatalogServer.main binds every interface and has no host option, hence this launcher.
//
// Compiled by scripts/install-java-tools.sh against the jars in build/java/server.classpath, or
// run in Java source-file mode:
//   java -cp "$(paste -sd: build/java/server.classpath)" LoopbackCatalogServer.java [port] [host]
// Backend catalog properties come from CATALOG_* environment variables, decoded the same way
// the REST Compatibility Kit decodes them (prefix dropped, "__" -> "-", "_" -> ".", lower case).
// Defaults: JdbcCatalog on in-memory SQLite, warehouse in a fresh temporary directory.

import java.nio.file.Files;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.rest.RESTCatalogAdapter;
import org.apache.iceberg.rest.RESTCatalogServlet;
import org.eclipse.jetty.compression.gzip.GzipCompression;
import org.eclipse.jetty.compression.server.CompressionHandler;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

public class LoopbackCatalogServer {
  private static final String ENV_PREFIX = "CATALOG_";

  public static void main(String[] args) throws Exception {
    int port = args.length > 0 ? Integer.parseInt(args[0]) : 8181;
    String host = args.length > 1 ? args[1] : "127.0.0.1";

    Map<String, String> properties = backendProperties();
    Catalog backend = CatalogUtil.buildIcebergCatalog("rest_backend", properties, new Configuration());

    ServletContextHandler context = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
    context.addServlet(new ServletHolder(new RESTCatalogServlet(new RESTCatalogAdapter(backend))), "/*");
    CompressionHandler compression = new CompressionHandler();
    compression.putCompression(new GzipCompression());
    context.insertHandler(compression);

    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost(host);
    connector.setPort(port);
    server.addConnector(connector);
    server.setHandler(context);
    server.start();
    // The start scripts wait for this exact line before using the server.
    System.out.println("reference catalog listening on http://" + host + ":" + connector.getLocalPort()
        + "/ warehouse=" + properties.get("warehouse"));
    System.out.flush();
    server.join();
  }

  private static Map<String, String> backendProperties() throws Exception {
    Map<String, String> properties = new HashMap<>();
    System.getenv().forEach((name, value) -> {
      if (name.startsWith(ENV_PREFIX)) {
        properties.put(toPropertyName(name.substring(ENV_PREFIX.length())), value);
      }
    });
    properties.putIfAbsent("catalog-impl", "org.apache.iceberg.jdbc.JdbcCatalog");
    properties.putIfAbsent("uri", "jdbc:sqlite::memory:");
    properties.putIfAbsent("jdbc.schema-version", "V1");
    if (!properties.containsKey("warehouse")) {
      properties.put("warehouse", Files.createTempDirectory("iceberg_warehouse").toString());
    }
    return properties;
  }

  private static String toPropertyName(String envName) {
    return envName.replace("__", "-").replace('_', '.').toLowerCase(Locale.ROOT);
  }
}
