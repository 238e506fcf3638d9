// The Node half of the JSON floor: times JSON.stringify and JSON.parse of one large ASCII string.
// Usage: node json-floor.mjs <size_bytes> <reps>. Prints one JSON line with every sample in milliseconds.
const size = Number(process.argv[2]);
const reps = Number(process.argv[3]);
const value = "x".repeat(size);
const encodeMs = [];
const decodeMs = [];
for (let rep = 0; rep < reps; rep++) {
  const t0 = performance.now();
  const encoded = JSON.stringify(value);
  const t1 = performance.now();
  const decoded = JSON.parse(encoded);
  const t2 = performance.now();
  if (decoded.length !== size)
    throw new Error(`json floor: decoded ${decoded.length} characters, expected ${size}`);
  encodeMs.push(t1 - t0);
  decodeMs.push(t2 - t1);
}
process.stdout.write(`${JSON.stringify({ encode_ms: encodeMs, decode_ms: decodeMs })}\n`);
