package io.ackpoint.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * README's configuration reference is made from the defaults file, which defines every key: each
 * key with its environment variable, its default and the comment above it. This test renders it
 * and fails while README shows anything else (the rendering is left in target/ to copy from).
 */
class ConfigReferenceTest {

  private static final Path DEFAULTS = Path.of("src/main/resources/ackpoint-defaults.yaml");

  @Test
  void readmeShowsTheReferenceOfEveryKeyAsTheDefaultsFileDefinesIt() throws IOException {
    String table = render(Files.readAllLines(DEFAULTS));
    Files.createDirectories(Path.of("target"));
    Files.writeString(Path.of("target/config-reference.md"), table);
    assertTrue(Files.readString(Path.of("README.md")).contains(table),
        "README's configuration reference is out of date: copy target/config-reference.md into it");
  }

  /**
   * The deployment files shipped beside the configuration are YAML that parses (compose.yaml held a
   * plain value with ": " in it, which no YAML parser takes, so it could not have been run).
   */
  @Test
  void everyYamlFileUnderConfParses() throws IOException {
    YAMLMapper yaml = new YAMLMapper();
    List<Path> files;
    try (Stream<Path> walk = Files.walk(Path.of("conf"))) {
      files = walk.filter(f -> f.toString().endsWith(".yaml") || f.toString().endsWith(".yml")).toList();
    }
    assertTrue(files.size() >= 3, "conf/ holds " + files);
    for (Path file : files) {
      try (MappingIterator<JsonNode> documents = yaml.readerFor(JsonNode.class).readValues(file.toFile())) {
        assertTrue(documents.readAll().stream().allMatch(JsonNode::isObject), file + " holds a document that is no mapping");
      }
    }
  }

  /** A markdown table: key, variable, default, what it does (the comment lines above the key). */
  static String render(List<String> yaml) {
    StringBuilder out = new StringBuilder("| key | environment variable | default | |\n|---|---|---|---|\n");
    List<String> path = new ArrayList<>();
    List<String> comment = new ArrayList<>();
    boolean started = false;
    for (String line : yaml) {
      String trimmed = line.trim();
      int depth = (line.length() - line.stripLeading().length()) / 2;
      if (trimmed.startsWith("#")) {
        // The file's own header, before the first key, describes the file, not a key.
        if (started) {
          comment.add(trimmed.substring(1).trim());
        }
        continue;
      }
      if (trimmed.isEmpty() || !trimmed.contains(":")) {
        continue;
      }
      started = true;
      String key = trimmed.substring(0, trimmed.indexOf(':'));
      String value = trimmed.substring(trimmed.indexOf(':') + 1).trim();
      while (path.size() > depth) {
        path.remove(path.size() - 1);
      }
      if (value.isEmpty()) {
        // A section's comment goes with its first key.
        path.add(key);
        continue;
      }
      String full = String.join(".", path) + (path.isEmpty() ? "" : ".") + key;
      out.append("| `").append(full).append("` | `").append(ConfigLoader.environmentVariable(full)).append("` | `")
          .append(value.replace("|", "\\|")).append("` | ").append(String.join(" ", comment).replace("|", "\\|"))
          .append(" |\n");
      comment.clear();
    }
    return out.toString();
  }
}
