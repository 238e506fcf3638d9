import { readFile, stat } from "node:fs/promises";
import { z } from "zod";
import type { AgentTool } from "../tool";
import { brief, defineTool, toolError } from "./define-tool";
import { resolveWorkspacePath } from "./workspace";

/** Largest image handed to a model (the smallest provider limit, Anthropic's 5 MB). */
export const VIEW_IMAGE_MAX_BYTES = 5 * 1024 * 1024;

/** The image type of the first bytes: PNG, JPEG, GIF or WebP, the formats vision models accept; else null. */
export function imageMediaType(bytes: Uint8Array): string | null {
  const at = (i: number, ...values: number[]) => values.every((v, k) => bytes[i + k] === v);
  if (at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png";
  if (at(0, 0xff, 0xd8, 0xff)) return "image/jpeg";
  if (at(0, 0x47, 0x49, 0x46, 0x38)) return "image/gif";
  if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50)) return "image/webp";
  return null;
}

const ViewImageInput = z.strictObject({
  path: z.string().describe("Image file path, relative to the working directory"),
});

/**
 * `view_image` (only for models with `vision`): a PNG, JPEG, GIF or WebP file inside the working
 * directory, recognised by its bytes, handed to the model as `media` (base64), at most 5 MiB.
 */
export function viewImageTool(): AgentTool {
  return defineTool({
    name: "view_image",
    kind: "filesystem.read",
    activityKind: "read",
    description: "Look at an image file (PNG, JPEG, GIF or WebP) inside the working directory.",
    input: ViewImageInput,
    title: (input) => `view_image ${brief(input.path)}`,
    target(input, context) {
      const path = resolveWorkspacePath(context.cwd, input.path);
      return { type: "read", path: path.ok ? path.real : input.path };
    },
    async execute(input, context) {
      const path = resolveWorkspacePath(context.cwd, input.path);
      if (!path.ok) return toolError(path.error);
      let size: number;
      try {
        const s = await stat(path.real);
        if (!s.isFile()) return toolError(`${path.display} is not a file`);
        size = s.size;
      } catch {
        return toolError(`${path.display} does not exist; check the path with glob`);
      }
      if (size > VIEW_IMAGE_MAX_BYTES) {
        return toolError(
          `${path.display} has ${size} bytes, more than the ${VIEW_IMAGE_MAX_BYTES}-byte image limit`,
        );
      }
      const bytes = await readFile(path.real);
      const mediaType = imageMediaType(bytes);
      if (mediaType === null) {
        return toolError(`${path.display} is not a PNG, JPEG, GIF or WebP image; read text with read_file`);
      }
      return {
        ok: true,
        output: `${path.display} (${mediaType}, ${bytes.length} bytes)`,
        media: [{ mediaType, data: bytes.toString("base64") }],
      };
    },
  });
}
