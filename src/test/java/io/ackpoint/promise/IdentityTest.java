package io.ackpoint.promise;

import io.ackpoint.support.AckpointExtension;
import io.ackpoint.support.StreamClient;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestKeys;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.ackpoint.support.ApiClient.data;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A full user id is the pair (sub, client id): no two different pairs share a row, a counter or an
 * acknowledgement, whatever characters the sub contains.
 */
@ExtendWith(VertxExtension.class)
class IdentityTest {

  @RegisterExtension
  final AckpointExtension app = AckpointExtension.with(TestAckpoint::withFollower);

  @Test
  void aSubWithASlashNeverSharesTheCounterOfAnotherSubsClient() {
    String alice = TestKeys.token("alice");
    String alicePhone = TestKeys.token("alice/phone");
    assertEquals("1", data(app.api().writeCheckpoint2(alice, "phone")).getString("write_checkpoint"));
    assertEquals("1", data(app.api().writeCheckpoint2(alicePhone, null)).getString("write_checkpoint"));
    assertEquals("2", data(app.api().writeCheckpoint2(alice, "phone")).getString("write_checkpoint"));
    assertEquals("2", data(app.api().writeCheckpoint2(alicePhone, null)).getString("write_checkpoint"));
  }

  @Test
  void aSuppliedIdNeverRaisesAnotherPrincipalsCheckpoint() {
    String alice = TestKeys.token("alice");
    String alicePhone = TestKeys.token("alice/phone");
    assertEquals("3", data(app.api().checkpointRequest(alice, "phone", "3")).getString("checkpoint_request_id"));
    assertEquals("1", data(app.api().checkpointRequest(alicePhone, null, "1")).getString("checkpoint_request_id"));
  }

  @Test
  void aStreamOfASubWithASlashSeesOnlyItsOwnAcknowledgements() {
    String alice = TestKeys.token("alice");
    String alicePhone = TestKeys.token("alice/phone");
    try (StreamClient impostor = StreamClient.syncStream(app.vertx(), app.port(), alicePhone, null)) {
      impostor.next();
      impostor.next();
      data(app.api().checkpointRequest(alice, "phone", "40"));
      data(app.api().checkpointRequest(alicePhone, null, "2"));
      // The first acknowledgement this stream sees is its own 2, never alice's 40.
      assertEquals("2", impostor.nextMatching(line -> line.containsKey("checkpoint_diff"))
          .getJsonObject("checkpoint_diff").getString("write_checkpoint"));
    }
  }

  @Test
  void subjectsThatDifferOnlyInUnpairedSurrogatesAreRefusedNotMerged() {
    // Spelled as JSON escapes: a token is JSON text, and JSON can name a lone surrogate.
    long exp = java.time.Instant.now().getEpochSecond() + 600;
    String loneHigh = TestKeys.withRawClaims("{\"sub\":\"a\\ud800\",\"aud\":\"" + TestKeys.AUDIENCE + "\",\"exp\":" + exp + "}");
    String loneLow = TestKeys.withRawClaims("{\"sub\":\"a\\udc00\",\"aud\":\"" + TestKeys.AUDIENCE + "\",\"exp\":" + exp + "}");
    assertEquals(401, app.api().writeCheckpoint2(loneHigh, null).statusCode());
    assertEquals(401, app.api().writeCheckpoint2(loneLow, null).statusCode());
    assertEquals(0, app.sql().checkpointRows());
  }

  @Test
  void clientIdsThatAreNotWellFormedPercentEncodedUtf8OrGivenTwiceAreRefusedNotMerged() {
    String token = TestKeys.token("bytes");
    for (String query : new String[] {"client_id=%ED%A0%80", "client_id=%FF", "client_id=%", "client_id=%zz", "client_id=%C3",
        "client_id=a&client_id=b", "client_id=a&client_id=a"}) {
      var response = io.ackpoint.support.ApiClient.send(app.api().request(io.vertx.core.http.HttpMethod.GET,
          "/write-checkpoint2.json?" + query).putHeader("Authorization", "Token " + token), null);
      assertEquals(400, response.statusCode(), query + ": " + response.bodyAsString());
      assertEquals("ACK_INVALID_QUERY", io.ackpoint.support.ApiClient.errorCode(response));
    }
    assertEquals(0, app.sql().checkpointRows());
    assertEquals("1", data(app.api().writeCheckpoint2(token, "caf\u00e9 \ud83d\ude00")).getString("write_checkpoint"));
  }

  @Test
  void queryParametersThatNoRouteReadsAreIgnoredEvenWhenRepeated() {
    String token = TestKeys.token("tagged");
    assertEquals("1", writeCheckpoint2(token, "utm=a&utm=b&client_id=x"));
    assertEquals("2", writeCheckpoint2(token, "client_id=x&_=1&_=2"));
  }

  @Test
  void aSemicolonInTheQueryIsPartOfTheClientIdNotASeparator() {
    String token = TestKeys.token("semicolon");
    assertEquals("1", writeCheckpoint2(token, "client_id=x;y"));
    assertEquals("2", writeCheckpoint2(token, "client_id=x%3By"));
    assertEquals("1", writeCheckpoint2(token, "client_id=x"));
    assertEquals("3", data(app.api().writeCheckpoint2(token, "x;y")).getString("write_checkpoint"));
  }

  private String writeCheckpoint2(String token, String query) {
    var response = io.ackpoint.support.ApiClient.send(app.api().request(io.vertx.core.http.HttpMethod.GET,
        "/write-checkpoint2.json?" + query).putHeader("Authorization", "Token " + token), null);
    assertEquals(200, response.statusCode(), query + ": " + response.bodyAsString());
    return data(response).getString("write_checkpoint");
  }
}
