import { describe, expect, it } from "vitest";
import { ConversationStore, newConversation } from "./conversation";

describe("ConversationStore", () => {
  it("gives a copy of what an attempt left, so the retry's changes do not alter it", () => {
    const store = new ConversationStore();
    const c = newConversation("task");
    c.messages.push({ role: "assistant", content: "a1" });
    store.keep("r", "n#1", 1, c);
    const taken = store.take("r", "n#1", 1)!;
    taken.messages.push({ role: "assistant", content: "a2" });
    expect(store.take("r", "n#1", 1)!.messages).toHaveLength(2);
    expect(store.take("r", "n#1", 2)).toBeNull();
    expect(store.take("r", "other", 1)).toBeNull();
  });

  it("drops an activation's conversations when it completes, and a run's on forgetRun", () => {
    const store = new ConversationStore();
    store.keep("r1", "a", 1, newConversation("t"));
    store.keep("r1", "b", 1, newConversation("t"));
    store.keep("r2", "a", 1, newConversation("t"));
    store.drop("r1", "a");
    expect(store.take("r1", "a", 1)).toBeNull();
    store.forgetRun("r1");
    expect(store.size).toBe(1);
    expect(store.take("r2", "a", 1)).not.toBeNull();
  });

  it("is bounded: the least recently used activation goes first", () => {
    const store = new ConversationStore(2);
    store.keep("r", "a", 1, newConversation("t"));
    store.keep("r", "b", 1, newConversation("t"));
    store.take("r", "a", 1);
    store.keep("r", "c", 1, newConversation("t"));
    expect(store.size).toBe(2);
    expect(store.take("r", "b", 1)).toBeNull();
    expect(store.take("r", "a", 1)).not.toBeNull();
  });
});
