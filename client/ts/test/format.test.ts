// The format functions against the golden files of the Go package that
// makes the same text (internal/render/testdata/*.txtar): the same inputs
// must give the same bytes, or a model reads one answer two ways.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";

import { fromJson, type DescMessage, type JsonValue, type MessageShape } from "@bufbuild/protobuf";

import {
  formatApply,
  formatDelete,
  formatEdit,
  formatGrepFile,
  formatGrepSummary,
  formatMove,
  formatRead,
  formatWrite,
  ApplyResponseSchema,
  DeleteResponseSchema,
  EditResponseSchema,
  GrepFileSchema,
  GrepSummarySchema,
  MoveResponseSchema,
  ReadResponseSchema,
  WriteResponseSchema,
} from "../src/index.js";
import { repoRoot } from "./server.js";

/** A txtar archive's files, in order: "-- NAME --" lines begin them. */
function parseTxtar(data: string): Array<{ name: string; data: string }> {
  const files: Array<{ name: string; data: string }> = [];
  for (const line of data.split(/(?<=\n)/)) {
    const m = /^-- (.+) --\n?$/.exec(line);
    if (m !== null) {
      files.push({ name: m[1], data: "" });
    } else if (files.length > 0) {
      files[files.length - 1].data += line;
    }
  }
  return files;
}

function decode<D extends DescMessage>(schema: D, json: JsonValue): MessageShape<D> {
  return fromJson(schema, json);
}

/** The renderings this package has, by golden file and variant. */
const variants: Record<string, Record<string, (input: JsonValue) => string>> = {
  read: { cli: (j) => formatRead(decode(ReadResponseSchema, j)) },
  edit: {
    cli: (j) => formatEdit(decode(EditResponseSchema, j)),
    "cli-diff": (j) => formatEdit(decode(EditResponseSchema, j), true),
  },
  write: { cli: (j) => formatWrite(decode(WriteResponseSchema, j)) },
  delete: { cli: (j) => formatDelete(decode(DeleteResponseSchema, j)) },
  move: { cli: (j) => formatMove(decode(MoveResponseSchema, j)) },
  apply: {
    cli: (j) => formatApply(decode(ApplyResponseSchema, j)),
    "cli-diff": (j) => formatApply(decode(ApplyResponseSchema, j), true),
  },
  grep: {
    cli: (j) => {
      const { files, summary } = j as { files: JsonValue[]; summary: JsonValue };
      return files.map((f) => formatGrepFile(decode(GrepFileSchema, f))).join("") + formatGrepSummary(decode(GrepSummarySchema, summary));
    },
  },
};

for (const [kind, renders] of Object.entries(variants)) {
  test(`format functions print ${kind}.txtar's outputs`, () => {
    const files = parseTxtar(readFileSync(join(repoRoot, "internal", "render", "testdata", `${kind}.txtar`), "utf8"));
    const outputs = new Map(files.map((f) => [f.name, f.data]));
    const inputs = files.filter((f) => f.name.endsWith(".json"));
    assert.ok(inputs.length > 0, `${kind}.txtar holds no input`);
    for (const input of inputs) {
      const name = input.name.slice(0, -".json".length);
      for (const [variant, render] of Object.entries(renders)) {
        const want = outputs.get(`${name}.${variant}`);
        assert.notEqual(want, undefined, `${kind}.txtar has no ${name}.${variant}`);
        // Each output is followed by one newline that is not part of it.
        assert.equal(render(JSON.parse(input.data) as JsonValue) + "\n", want, `${kind}: ${name}.${variant}`);
      }
    }
  });
}
