// Parses GGUF files with Hugging Face's @huggingface/gguf and prints what it read as one JSON document:
// { "<file>": { metadata, types, tensorInfos, tensorDataOffset, littleEndian, fileSize } }. 64-bit integers
// are printed as decimal strings (JSON numbers would lose bits past 2^53).
// Usage: node read_gguf.mjs NODE_MODULES_DIR FILE...
import { createRequire } from "node:module";
import { statSync } from "node:fs";
import { join } from "node:path";

const [modules, ...files] = process.argv.slice(2);
const require = createRequire(join(modules, "noop.js"));
const { gguf, GGMLQuantizationType, GGUFValueType } = require("@huggingface/gguf");

const plain = (value) => (typeof value === "bigint" ? value.toString() : value);

const out = {};
for (const file of files) {
  const parsed = await gguf(file, { allowLocalFile: true, typedMetadata: true });
  const types = {};
  for (const [key, entry] of Object.entries(parsed.typedMetadata)) {
    types[key] = { type: GGUFValueType[entry.type] ?? entry.type, subType: entry.subType === undefined ? null : GGUFValueType[entry.subType] };
  }
  out[file] = {
    metadata: parsed.metadata,
    types,
    tensorInfos: parsed.tensorInfos.map((info) => ({
      name: info.name,
      nDims: info.n_dims,
      shape: info.shape,
      dtype: info.dtype,
      dtypeName: GGMLQuantizationType[info.dtype] ?? null,
      offset: info.offset,
    })),
    tensorDataOffset: parsed.tensorDataOffset,
    littleEndian: parsed.littleEndian,
    fileSize: statSync(file).size,
  };
}
process.stdout.write(JSON.stringify(out, (key, value) => plain(value)));
