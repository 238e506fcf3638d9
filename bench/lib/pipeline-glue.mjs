// What the pipeline row's child (children/pipeline-acp.mjs) puts around the packages it measures: the
// layered pipeline's definition, a counting proxy over the store, and the real node executor with a
// session per node. Kept apart so that the harness tests check them.

/**
 * A pipeline of `layers` layers of `width` nodes, every node of a layer depending on all of the layer
 * before, each on the agent profile `profile`, with the run's task and its upstream summaries as prompt.
 */
export function layeredPipeline({ layers, width, profile }) {
  const id = (layer, k) => `l${layer}n${k}`;
  const nodes = [];
  for (let layer = 0; layer < layers; layer++) {
    for (let k = 0; k < width; k++) {
      nodes.push({
        id: id(layer, k),
        name: `Layer ${layer} node ${k}`,
        profile_id: profile,
        prompt_template: "{{task}}\n\n{{upstream_summaries}}",
        depends_on: layer === 0 ? [] : Array.from({ length: width }, (_, j) => id(layer - 1, j)),
      });
    }
  }
  return { name: `bench ${layers}x${width}`, nodes };
}

/**
 * A proxy over `store` that counts each method call into `counts` (method → calls) while `counting.on` is
 * true, and otherwise passes every call and property through: the store itself is not changed.
 */
export function countingStore(store, counts, counting) {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      return (...args) => {
        if (counting.on) counts.set(property, (counts.get(property) ?? 0) + 1);
        return value.apply(target, args);
      };
    },
  });
}

/**
 * A `NodeExecutor` that runs each node attempt on a new executor of `makeExecutor()` (the real one) and
 * closes that executor as soon as its node ends, in the background (`stopSessions` and `close` wait for
 * every close begun). The real executor keeps every session open until the run ends, for
 * `reuse_session_of`: for 200 nodes that is 200 agent processes and 200 handoff MCP servers at once
 * (about 110 MiB each here, over 20 GiB); the bench pipeline continues no session, so a node's session can
 * end with it, as the bare client's does. An attempt that would continue a session is refused.
 * `maxInFlight()` is the most attempts it had running at once.
 */
export function sessionPerNode(makeExecutor) {
  const closing = new Set();
  let inFlight = 0;
  let most = 0;
  const settle = async () => {
    while (closing.size > 0) await Promise.all([...closing]);
  };
  return {
    async runNode(request, signal) {
      if (request.reuseSession !== null) {
        throw new Error(
          `node ${request.node.id} continues session ${request.reuseSession}; the bench pipeline continues none`,
        );
      }
      const executor = makeExecutor();
      inFlight += 1;
      most = Math.max(most, inFlight);
      try {
        return await executor.runNode(request, signal);
      } finally {
        inFlight -= 1;
        const closed = executor
          .close()
          .catch(() => undefined)
          .finally(() => closing.delete(closed));
        closing.add(closed);
      }
    },
    stopSessions: settle,
    close: settle,
    maxInFlight: () => most,
  };
}
