// LangGraph JS for bench/children/peer-langgraph.mjs, resolved from bench/peers/node_modules (this package is
// not part of the workspace; bench/run.mjs installs it on first use).
export { Annotation, END, START, StateGraph } from "@langchain/langgraph";
