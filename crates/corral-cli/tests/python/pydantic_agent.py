"""A stock pydantic-ai agent using corral over MCP, as the README connects it.

The README's pydantic-ai snippet is run as written (from the workspace, with `corral` on
PATH, and the environment the MCP SDK gives a stdio server: HOME, PATH and a few more);
then the agent is driven by a scripted model (`FunctionModel`) through the steps in
argv[2], a JSON list of tool calls. A step may be `{"follow": "output"}`: call whatever
`output {...}` call the previous result named, as a model following the advice would.

Prints one JSON object: `seen`, what the model was handed after each call (the exact text
pydantic-ai sends a provider), and `output`, the agent's final text.
"""

import json
import re
import sys
from pathlib import Path

from pydantic_ai.messages import ModelResponse, RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

readme = Path(sys.argv[1]).read_text()
snippet = re.search(r"\*\*pydantic-ai\*\*.*?```python\n(.*?)```", readme, re.S).group(1)
namespace: dict = {}
exec(snippet, namespace)
agent = namespace["agent"]

steps = json.loads(sys.argv[2])
seen: list[str] = []


def follow(text: str) -> ToolCallPart:
    """The `output` call an observation names, taken literally."""
    observation = json.loads(text)["observation"]
    match = re.search(r"read them with output (\{.*?\}) …", observation)
    if match is None:
        raise AssertionError(f"no output call named in: {text[-2000:]}")
    return ToolCallPart("output", json.loads(match.group(1)))


def scripted(messages, info: AgentInfo) -> ModelResponse:
    for part in messages[-1].parts:
        if isinstance(part, ToolReturnPart):
            seen.append(part.model_response_str())
        elif isinstance(part, RetryPromptPart):
            seen.append("RETRY: " + part.model_response())
    if len(seen) >= len(steps):
        return ModelResponse(parts=[TextPart("done")])
    step = steps[len(seen)]
    if step.get("follow") == "output":
        return ModelResponse(parts=[follow(seen[-1])])
    return ModelResponse(parts=[ToolCallPart(step["tool"], step["args"])])


result = agent.run_sync("Find out why the test suite fails.", model=FunctionModel(scripted))
print(json.dumps({"seen": seen, "output": result.output}))
