from benchmark.fields import NUL_SYMBOL, without_nul


def test_it_replaces_nul_in_nested_values():
    assert without_nul({"a\x00": ["x\x00y", 1, None, {"k": "\x00"}]}) == {
        f"a{NUL_SYMBOL}": [f"x{NUL_SYMBOL}y", 1, None, {"k": NUL_SYMBOL}]
    }
    assert without_nul("plain") == "plain"


def test_it_stores_program_output_with_nul_bytes(db):
    """PostgreSQL refuses NUL in text and jsonb; the step must still be stored, with the NUL shown."""
    from benchmark.models import AgentConfig, Run, Step, Task

    task = Task.objects.create(slug="t", version_hash="h", kind="mlgym", title="T")
    agent = AgentConfig.objects.create(name="a", kind="baseline")
    run = Run.objects.create(task=task, agent=agent)
    Step.objects.bulk_create([Step(run=run, index=1, observation="bin\x00ary", state={"out": "\x00"})])
    step = Step.objects.get(run=run, index=1)
    assert step.observation == f"bin{NUL_SYMBOL}ary"
    assert step.state == {"out": NUL_SYMBOL}
