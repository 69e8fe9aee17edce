# Multi-stage build of the runnable jar. Not built on the development machines (they have no
# Docker engine); kept deliberately plain.
FROM maven:3.9-eclipse-temurin-17 AS build
WORKDIR /src
COPY pom.xml .
RUN mvn -B -q dependency:go-offline
COPY src src
RUN mvn -B -q -DskipTests package

FROM eclipse-temurin:17-jre
RUN useradd --system --create-home --home-dir /app ackpoint
WORKDIR /app
COPY --from=build /src/target/ackpoint.jar /app/ackpoint.jar
COPY conf /app/conf
RUN mkdir -p /app/data && chown -R ackpoint:ackpoint /app
USER ackpoint
# Listen on every interface inside the container; the embedded database keeps its data in /app/data.
# Off loopback the development key of conf/ackpoint.yaml is refused: set ACKPOINT_AUTH_JWKS (or _JWKS_URI).
ENV ACKPOINT_HTTP_HOST=0.0.0.0
VOLUME /app/data
EXPOSE 8080
ENTRYPOINT ["java", "-XX:+ExitOnOutOfMemoryError", "-jar", "/app/ackpoint.jar"]
