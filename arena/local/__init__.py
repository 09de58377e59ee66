"""Local tools: the stack of processes behind ``ohell up`` and ``ohell demo``, ``ohell play``."""
