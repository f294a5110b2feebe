"""Your policy for MountainCarContinuous-v0."""


def act(observation: list[float]) -> float:
    """Push gently in the direction the car already moves (too weakly to reach the flag)."""
    position, velocity = observation
    return 0.15 if velocity >= 0 else -0.15
