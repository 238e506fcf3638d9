from chrys.workflows import WorkflowBuilder, WorkflowValue

wf = WorkflowBuilder("Echo")


def echo(value: WorkflowValue) -> WorkflowValue:
    return value


node = wf.python("echo", echo)  # Register the node
wf.start(node)                 # Declare the single top-level start
wf.output(node)                # Declare at least one output; it may also be the start
workflow = wf.build()          # Validate, build, and assign to the module-level workflow variable
