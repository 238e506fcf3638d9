import { describe, expect, it } from "vitest";
import { configDir } from "./config-dir";

describe("configDir", () => {
  it("uses CHRYS_HOME when it is set", () => {
    expect(configDir({ CHRYS_HOME: "/tmp/chrys" }, "/home/ada", "linux")).toBe("/tmp/chrys");
    expect(configDir({ CHRYS_HOME: "D:\\chrys", APPDATA: "C:\\x" }, "C:\\Users\\ada", "win32")).toBe(
      "D:\\chrys",
    );
  });

  it("treats an empty CHRYS_HOME as unset", () => {
    expect(configDir({ CHRYS_HOME: "" }, "/home/ada", "linux")).toBe("/home/ada/.chrys");
  });

  it("is ~/.chrys on Linux and macOS", () => {
    expect(configDir({}, "/home/ada", "linux")).toBe("/home/ada/.chrys");
    expect(configDir({ APPDATA: "/ignored" }, "/Users/ada", "darwin")).toBe("/Users/ada/.chrys");
  });

  it("is %APPDATA%\\chrys on Windows", () => {
    expect(configDir({ APPDATA: "C:\\Users\\ada\\AppData\\Roaming" }, "C:\\Users\\ada", "win32")).toBe(
      "C:\\Users\\ada\\AppData\\Roaming\\chrys",
    );
    expect(configDir({}, "C:\\Users\\ada", "win32")).toBe("C:\\Users\\ada\\AppData\\Roaming\\chrys");
  });
});
