/**
 * @module @icode/workflow-graph
 * The workflow Definition model (zod), WorkflowValue and its limits, structural validation with warnings,
 * and the topology index the scheduler runs on.
 *
 * @example
 * import { validateDefinition } from "@icode/workflow-graph";
 * const { definition, diagnostics } = validateDefinition(JSON.parse(manifestJson));
 * diagnostics.filter((d) => d.severity === "error").map((d) => d.message);
 * // → [] when the graph is valid, else e.g. ['cycle: the edge "b->a" closes a cycle: "a" -> "b" -> "a"']
 */
export { type CapturedText, CapturedTextSchema, type TailText, TailTextSchema } from "./captured";
export {
  blankStrings,
  findLargeStrings,
  LARGE_STRING_CHARS,
  type LargeString,
  type PathStep,
  placeString,
} from "./large-strings";
export {
  GRAPH_CODES,
  GRAPH_RULES,
  GRAPH_WARNINGS,
  type GraphCode,
  type GraphPhase,
  type GraphRule,
  type GraphRuleId,
  type GraphWarningId,
} from "./rules/rule";
export {
  type AgentNode,
  AgentNodeSchema,
  DEFINITION_FORMAT,
  type Definition,
  DefinitionSchema,
  type Edge,
  type EdgeCondition,
  EdgeConditionSchema,
  EdgeSchema,
  edgeKey,
  type JoinNode,
  JoinNodeSchema,
  joinNodeId,
  type LoopNode,
  LoopNodeSchema,
  type NodeKind,
  NodeSchema,
  type PythonNode,
  PythonNodeSchema,
  type Retry,
  RetrySchema,
  type Site,
  SiteSchema,
  TimeoutSchema,
  type WorkflowNode,
} from "./schema";
export {
  type Adjacency,
  bodyOf,
  edgesFrom,
  edgesInto,
  type GraphIndex,
  indexDefinition,
  nodeNamed,
  nodeNumber,
  type SwitchGroup,
  switchesOf,
} from "./topology";
export {
  checkDefinition,
  GRAPH_CHECKS,
  type GraphFinding,
  MAX_SCHEMA_DIAGNOSTICS,
  validateDefinition,
} from "./validate";
export {
  checkWorkflowValue,
  combineInputBytes,
  type JsonValue,
  JsonValueSchema,
  jsonByteLength,
  MAX_COMBINE_INPUT_BYTES,
  MAX_DATA_DEPTH,
  MAX_DATA_VALUES,
  MAX_MESSAGE_BYTES,
  MAX_STRING_CHARS,
  mergeSources,
  type SourceValue,
  SourceValueSchema,
  VALUE_CODES,
  type ValueCheck,
  type ValueCode,
  type WorkflowValue,
  WorkflowValueSchema,
} from "./value";
