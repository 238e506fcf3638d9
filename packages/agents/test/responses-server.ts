/*
 * A loopback server speaking the OpenAI Responses API (`POST /v1/responses`), plain JSON and SSE, for the
 * `api_style: responses` tests (the provider double speaks Chat Completions and Anthropic Messages only).
 * Each request gets the next scripted reply: text, or function calls; every request body is recorded.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export type ResponsesReply =
  | { type: "text"; text: string }
  | { type: "calls"; calls: { name: string; arguments: Record<string, unknown> }[] };

export interface ResponsesServer {
  readonly baseUrl: string;
  readonly bodies: Record<string, unknown>[];
  readonly headers: Record<string, string | string[] | undefined>[];
  script(replies: ResponsesReply[]): void;
  close(): Promise<void>;
}

export async function startResponsesServer(): Promise<ResponsesServer> {
  const queue: ResponsesReply[] = [];
  const bodies: Record<string, unknown>[] = [];
  const headers: Record<string, string | string[] | undefined>[] = [];
  let seq = 0;
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk: Buffer) => {
      raw += chunk.toString("utf8");
    });
    req.on("end", () => {
      if (req.url !== "/v1/responses") {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(raw) as Record<string, unknown>;
      bodies.push(body);
      headers.push(req.headers);
      seq += 1;
      const reply = queue.shift() ?? { type: "text", text: "unscripted" };
      const output = outputOf(reply, seq);
      const usage = { input_tokens: 12, output_tokens: 3, total_tokens: 15 };
      const response = {
        id: `resp_${seq}`,
        object: "response",
        created_at: 0,
        model: String(body["model"]),
        status: "completed",
        output,
        usage,
        incomplete_details: null,
      };
      if (body["stream"] !== true) {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(response));
        return;
      }
      const events: Record<string, unknown>[] = [
        { type: "response.created", response: { ...response, output: [], status: "in_progress" } },
      ];
      output.forEach((item, index) => {
        if (item.type === "message") {
          events.push({
            type: "response.output_item.added",
            output_index: index,
            item: { type: "message", id: item.id, role: "assistant", content: [] },
          });
          for (const word of (item.content[0]?.text ?? "").split(/(?<= )/u))
            events.push({
              type: "response.output_text.delta",
              item_id: item.id,
              output_index: index,
              content_index: 0,
              delta: word,
            });
          events.push({ type: "response.output_item.done", output_index: index, item });
        } else {
          events.push({
            type: "response.output_item.added",
            output_index: index,
            item: { ...item, arguments: "", status: "in_progress" },
          });
          events.push({
            type: "response.function_call_arguments.delta",
            item_id: item.id,
            output_index: index,
            delta: item.arguments,
          });
          events.push({
            type: "response.output_item.done",
            output_index: index,
            item: { ...item, status: "completed" },
          });
        }
      });
      events.push({ type: "response.completed", response });
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(
        events
          .map((e, i) => `event: ${e["type"]}\ndata: ${JSON.stringify({ ...e, sequence_number: i })}\n\n`)
          .join(""),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    bodies,
    headers,
    script: (replies) => queue.push(...replies),
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

type OutputItem =
  | {
      type: "message";
      id: string;
      role: "assistant";
      status: "completed";
      content: { type: "output_text"; text: string; annotations: [] }[];
    }
  | {
      type: "function_call";
      id: string;
      call_id: string;
      name: string;
      arguments: string;
      status: "completed";
    };

function outputOf(reply: ResponsesReply, seq: number): OutputItem[] {
  if (reply.type === "text") {
    return [
      {
        type: "message",
        id: `msg_${seq}`,
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: reply.text, annotations: [] }],
      },
    ];
  }
  return reply.calls.map((c, i) => ({
    type: "function_call",
    id: `fc_${seq}_${i}`,
    call_id: `call_${seq}_${i}`,
    name: c.name,
    arguments: JSON.stringify(c.arguments),
    status: "completed",
  }));
}
