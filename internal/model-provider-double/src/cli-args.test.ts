import { describe, expect, it } from "vitest";
import { parseCliArgs } from "./cli-args";

describe("parseCliArgs", () => {
  it("takes a script and a port, port 0 by default", () => {
    expect(parseCliArgs(["--script", "s.json", "--port", "8080"])).toEqual({
      help: false,
      script: "s.json",
      port: 8080,
    });
    expect(parseCliArgs([])).toEqual({ help: false, port: 0 });
    expect(parseCliArgs(["-h"])).toMatchObject({ help: true });
  });

  it.each([
    [["--port=-1"], '--port must be an integer 0-65535; found "-1"'],
    [["--port", "70000"], "--port must be an integer 0-65535"],
    [["--port", "1.5"], "--port must be an integer 0-65535"],
    [["--verbose"], "Unknown option '--verbose'"],
    [["stray"], "stray"],
  ])("refuses %j with invalid_arguments", (argv, message) => {
    expect(() => parseCliArgs(argv)).toThrow(
      expect.objectContaining({ code: "invalid_arguments", message: expect.stringContaining(message) }),
    );
  });
});
