import { expect, test } from "vitest";
import { TailBuffer } from "./native";

test("keeps the last bytes and counts the dropped ones", () => {
  const tail = new TailBuffer(10);
  tail.push(Buffer.from("abcdef"));
  tail.push(Buffer.from("ghijkl"));
  expect(tail.read()).toEqual({ text: "cdefghijkl", dropped_bytes: 2 });
  tail.push(Buffer.from("0123456789XYZ"));
  expect(tail.read()).toEqual({ text: "3456789XYZ", dropped_bytes: 15 });
});

test("a character whose first bytes were dropped is dropped whole", () => {
  const tail = new TailBuffer(4);
  tail.push(Buffer.from("aé€", "utf8")); // a (1) é (2) € (3)
  expect(tail.read()).toEqual({ text: "€", dropped_bytes: 3 });
});

test("nothing written reads empty", () => {
  expect(new TailBuffer(4).read()).toEqual({ text: "", dropped_bytes: 0 });
});
