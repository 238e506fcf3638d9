import { config } from "zod";

// Imported first by a command that parses each of its zod schemas once or twice, such as a cold `icode
// workflow validate`. The first time zod parses with an object schema it compiles a fast path for it with
// `new Function`; in a one-shot process that compiling costs more than it saves (~15 ms of a validation), and
// V8's code cache cannot keep code made that way. zod reads the setting when a schema is built, so it has to
// come before the modules that build schemas: this module has no other imports, and is imported first.
config({ jitless: true });
