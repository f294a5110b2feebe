"""The agent's prompt: system message (tools, response format), task message, per-step observation."""

from __future__ import annotations

from dataclasses import dataclass

WINDOW = 1000  # lines the file viewer shows at a time, as in MLGym


@dataclass(frozen=True)
class ToolDoc:
    name: str
    signature: str
    docstring: str


TOOL_DOCS: tuple[ToolDoc, ...] = (
    ToolDoc(
        "open",
        'open "<path>" [<line_number>]',
        "opens the file at the given path in the editor. If line_number is provided, the window will be"
        " moved to include that line",
    ),
    ToolDoc("goto", "goto <line_number>", "moves the window to show <line_number>"),
    ToolDoc("scroll_down", "scroll_down", f"moves the window down {WINDOW} lines"),
    ToolDoc("scroll_up", "scroll_up", f"moves the window up {WINDOW} lines"),
    ToolDoc("create", "create <filename>", "creates and opens a new file with the given name"),
    ToolDoc(
        "search_dir",
        "search_dir <search_term> [<dir>]",
        "searches for search_term in all files in dir. If dir is not provided, searches in the current directory",
    ),
    ToolDoc(
        "search_file",
        "search_file <search_term> [<file>]",
        "searches for search_term in file. If file is not provided, searches in the current open file",
    ),
    ToolDoc(
        "find_file",
        "find_file <file_name> [<dir>]",
        "finds all files with the given name in dir. If dir is not provided, searches in the current directory",
    ),
    ToolDoc(
        "edit",
        "edit <start_line>:<end_line>\n<replacement_text>\nend_of_edit",
        "replaces lines <start_line> through <end_line> (inclusive) with the given text in the open file."
        " The replacement text is terminated by a line with only end_of_edit on it. Python files are"
        " checked with flake8 after the edit; an edit that introduces new errors is not applied and the"
        " errors are shown.",
    ),
    ToolDoc(
        "insert",
        "insert <line_number>\n<text_to_add>\nend_of_insert",
        "inserts the given text after the specified line number in the open file. The text is terminated"
        " by a line with only end_of_insert on it. Python files are checked with flake8 as for edit.",
    ),
    ToolDoc(
        "memory_write",
        "memory_write <text>",
        "stores a note (results, insights, failed ideas) in your memory for later steps",
    ),
    ToolDoc(
        "memory_read",
        "memory_read <query>",
        "returns the notes in your memory most relevant to the query",
    ),
    ToolDoc(
        "literature_search",
        "literature_search <query>",
        "searches the research literature and returns titles, authors, years and abstracts",
    ),
    ToolDoc("parse_pdf", "parse_pdf <url_or_path>", "returns the text of a PDF file"),
    ToolDoc("validate", "validate", "validates your current submission file and returns the metrics on the dev split"),
    ToolDoc("submit", "submit", "submits your current submission and terminates the session"),
)

SYSTEM_TEMPLATE = """SETTING: You are an autonomous Machine Learning Researcher, and you're working directly in the command line with a special interface.

The special interface consists of a file editor that shows you {window} lines of a file at a time.
In addition to typical bash commands, you can also use the following commands to help you navigate and edit files.

COMMANDS:
{commands}
{unavailable}
Please note that THE EDIT and INSERT COMMANDS REQUIRE PROPER INDENTATION.
If you'd like to add the line '        print(x)' you must fully write that out, with all those spaces before the code!

RESPONSE FORMAT:
Your shell prompt is formatted as follows:
(Open file: <path>) <cwd> $

You need to format your output using two fields; discussion and command.
Your output should always include _one_ discussion and _one_ command field EXACTLY as in the following example:
DISCUSSION
First I'll start by using ls to see what files are in the current directory. Then maybe we can look at some relevant files to see what they look like.
```
ls -a
```

You should only include a *SINGLE* command in the command section and then wait for a response from the shell before continuing with more discussion and commands.
You're free to use any other bash commands you want (e.g. find, grep, cat, ls, cd) in addition to the special commands listed above.
However, the environment does NOT support interactive session commands (e.g. python, vim), so please do not invoke them.
Your goal is to achieve the best possible score, not just to submit your first working solution. Validate often with `validate`; it scores your current submission on the dev split. When you cannot make further progress, use `submit`: it scores your submission on the held-out test split and ends the session.
You have {max_steps} steps. Each command may take at most {command_timeout} seconds.
"""

TASK_TEMPLATE = """We're currently solving the following task. Here's the task description:

TASK DESCRIPTION:
{description}

INSTRUCTIONS:
Now, you're going to improve performance on this task. Your terminal session has started and you're in the workspace root directory. You can use any bash commands or the special interface to help you.
Remember, YOU CAN ONLY ENTER ONE COMMAND AT A TIME. You should always wait for feedback after every command.

(Current Step: 0, Remaining Steps: {max_steps})
(Open file: {open_file})
(Current directory: {working_dir})
bash-$"""

NEXT_TEMPLATE = """{observation}
(Current Step: {step}, Remaining Steps: {remaining})
(Open file: {open_file})
(Current directory: {working_dir})
bash-$"""

ELIDED = "Old environment output: ({lines} lines omitted)"


def _format_tool(doc: ToolDoc) -> str:
    return f"{doc.name}:\n  docstring: {doc.docstring}\n  signature: {doc.signature}\n"


def system_message(*, available: set[str], max_steps: int, command_timeout: int) -> str:
    shown = [d for d in TOOL_DOCS if d.name in available]
    missing = [d.name for d in TOOL_DOCS if d.name not in available]
    unavailable = (
        f"These commands are NOT available in this session (no provider is configured): {', '.join(missing)}.\n"
        if missing
        else ""
    )
    return SYSTEM_TEMPLATE.format(
        window=WINDOW,
        commands="\n".join(_format_tool(d) for d in shown),
        unavailable=unavailable,
        max_steps=max_steps,
        command_timeout=command_timeout,
    )
