/**
 * A child process for the trust store tests: saves trust records for one workflow in a loop, as fast as
 * it can, until killed or until it has written `count` records (0: forever). Prints `ready` once the
 * first record is saved. Every title is `<tag>:<n>:` followed by `pad` x's, so a reader can tell a whole
 * record from a torn one.
 *
 * argv: chrysHome entryPath tag count pad
 */
import { sha256Hex, writeTrust } from "../../src/index";

const [chrysHome, entry, tag, count, pad] = process.argv.slice(2) as [string, string, string, string, string];
const limit = Number(count);
const padding = "x".repeat(Number(pad));
for (let i = 0; limit === 0 || i < limit; i++) {
  await writeTrust(chrysHome, {
    path: entry,
    workflow_id: "echo",
    layout: "file",
    source_digest: sha256Hex(`source ${tag} ${i}`),
    definition_digest: sha256Hex("definition"),
    environment_fingerprint: sha256Hex("environment"),
    title: `${tag}:${i}:${padding}`,
  });
  if (i === 0) process.stdout.write("ready\n");
}
