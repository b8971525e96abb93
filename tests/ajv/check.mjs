// Usage: node check.mjs SCHEMA_DIR < cases.json
// Compiles every *.schema.json in ajv 8 strict mode (with ajv-formats), then validates each
// [schemaId, value] pair read from stdin and prints a JSON array of booleans.
import fs from "node:fs";
import path from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

function walk(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith(".schema.json") ? [path.join(dir, e.name)] : [],
  );
}

const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormats(ajv);
const schemas = walk(process.argv[2]).map((f) => JSON.parse(fs.readFileSync(f, "utf8")));
for (const schema of schemas) ajv.addSchema(schema);
for (const schema of schemas) ajv.getSchema(schema.$id); // compiles; throws on any strict-mode problem
const cases = JSON.parse(fs.readFileSync(0, "utf8") || "[]");
const results = cases.map(([id, value]) => Boolean(ajv.getSchema(id)(value)));
process.stdout.write(JSON.stringify({ compiled: schemas.map((s) => s.$id), results }));
