import type { ContentBlock } from "@agentclientprotocol/sdk/unstable";

/**
 * The text of a prompt as the agent reads it: text blocks as they are, embedded text resources by their
 * text, links and other blocks as a short `[kind uri]` mark; blocks joined by newlines.
 */
export function promptText(blocks: readonly ContentBlock[]): string {
  return blocks
    .map((block) => {
      switch (block.type) {
        case "text":
          return block.text;
        case "resource_link":
          return `[resource_link ${block.uri}]`;
        case "resource":
          return "text" in block.resource ? block.resource.text : `[resource ${block.resource.uri}]`;
        default:
          return `[${block.type}]`;
      }
    })
    .join("\n");
}
