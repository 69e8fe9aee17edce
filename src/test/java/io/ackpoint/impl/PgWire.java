package io.ackpoint.impl;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.nio.charset.StandardCharsets;

/** PostgreSQL protocol messages as bytes on a socket, for the tests of what passes one. */
final class PgWire {

  private PgWire() {
  }

  static ByteBuf startUp() {
    return untyped(196608, "user\0postgres\0\0".getBytes(StandardCharsets.US_ASCII));
  }

  static ByteBuf query(String sql) {
    return typed('Q', sql + "\0");
  }

  static ByteBuf readyForQuery() {
    return typed('Z', "I");
  }

  static ByteBuf untyped(int code, byte[] body) {
    return Unpooled.buffer().writeInt(8 + body.length).writeInt(code).writeBytes(body);
  }

  static ByteBuf typed(char type, String body) {
    return typed(type, body.getBytes(StandardCharsets.US_ASCII));
  }

  static ByteBuf typed(char type, byte[] body) {
    return Unpooled.buffer().writeByte(type).writeInt(4 + body.length).writeBytes(body);
  }
}
