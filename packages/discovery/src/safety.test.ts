import { describe, expect, it } from "vitest";
import { ownershipProblem } from "./safety";

const me = { uid: 1000, gid: 1000 };
const stat = (uid: number, gid: number, mode: number) => ({ uid, gid, mode: 0o100000 | mode });

describe("the ownership rule", () => {
  it.each([
    ["your own file, 0644", stat(1000, 1000, 0o644), me, null],
    ["your own file, 0600", stat(1000, 1000, 0o600), me, null],
    ["a root-owned file, 0644", stat(0, 0, 0o644), me, null],
    ["your file, group-writable, your primary group (user private group)", stat(1000, 1000, 0o664), me, null],
    ["your file, group-writable, another group", stat(1000, 100, 0o664), me, "group 100"],
    ["a root-owned file, group-writable", stat(0, 0, 0o664), me, "group 0"],
    ["your file, writable by others", stat(1000, 1000, 0o666), me, "every user"],
    ["your file, writable by others only", stat(1000, 1000, 0o602), me, "every user"],
    ["someone else's file", stat(1001, 1000, 0o644), me, "belongs to user 1001"],
    ["a root-owned file when running as root", stat(0, 0, 0o644), { uid: 0, gid: 0 }, null],
    [
      "a user's file when running as root",
      stat(1000, 1000, 0o644),
      { uid: 0, gid: 0 },
      "belongs to user 1000",
    ],
    ["anything when ownership is not checked", stat(1001, 5, 0o777), null, null],
  ])("%s", (_name, st, owner, expected) => {
    const found = ownershipProblem("/w/x.py", st, owner, "source_unreadable");
    if (expected === null) {
      expect(found).toBeNull();
    } else {
      expect(found).toMatchObject({ code: "source_unreadable", stage: "read", file: "/w/x.py" });
      expect(found?.message).toContain(expected);
      expect(found?.hint).not.toBeNull();
    }
  });
});
