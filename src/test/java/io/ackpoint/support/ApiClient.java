package io.ackpoint.support;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;

/** A PowerSync-like HTTP client of a running Ackpoint, over a real socket. Calls block the test thread only. */
public final class ApiClient {

  private final WebClient client;

  public ApiClient(Vertx vertx, int port) {
    this.client = WebClient.create(vertx, new WebClientOptions().setDefaultHost("127.0.0.1").setDefaultPort(port));
  }

  public HttpResponse<Buffer> writeCheckpoint2(String token, String clientId) {
    HttpRequest<Buffer> request = client.get("/write-checkpoint2.json");
    if (clientId != null) {
      request.addQueryParam("client_id", clientId);
    }
    return send(authorized(request, token), null);
  }

  public HttpResponse<Buffer> checkpointRequest(String token, String body) {
    HttpRequest<Buffer> request = authorized(client.post("/sync/checkpoint-request"), token)
        .putHeader("content-type", "application/json");
    return send(request, Buffer.buffer(body));
  }

  /** {@code POST /sync/checkpoint-request?wait=S}: answers once acknowledged or after S seconds. */
  public HttpResponse<Buffer> checkpointRequestAwaiting(String token, String body, int waitSeconds) {
    HttpRequest<Buffer> request = authorized(client.post("/sync/checkpoint-request"), token)
        .addQueryParam("wait", Integer.toString(waitSeconds))
        .putHeader("content-type", "application/json");
    return send(request, Buffer.buffer(body));
  }

  public HttpResponse<Buffer> checkpointRequest(String token, String clientId, Object id) {
    JsonObject body = new JsonObject().put("client_id", clientId).put("checkpoint_request_id", id);
    return checkpointRequest(token, body.encode());
  }

  public HttpRequest<Buffer> request(io.vertx.core.http.HttpMethod method, String path) {
    return client.request(method, path);
  }

  private static HttpRequest<Buffer> authorized(HttpRequest<Buffer> request, String token) {
    return token == null ? request : request.putHeader("Authorization", "Token " + token);
  }

  public static HttpResponse<Buffer> send(HttpRequest<Buffer> request, Buffer body) {
    return Await.result(body == null ? request.send() : request.sendBuffer(body));
  }

  /** The {@code data} of a success envelope. */
  public static JsonObject data(HttpResponse<Buffer> response) {
    return response.bodyAsJsonObject().getJsonObject("data");
  }

  /** The {@code error.code} of a failure envelope. */
  public static String errorCode(HttpResponse<Buffer> response) {
    return response.bodyAsJsonObject().getJsonObject("error").getString("code");
  }

  public void close() {
    client.close();
  }
}
