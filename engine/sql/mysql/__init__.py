"""MySQL's rules that the statement handlers ask for (keys, defaults, variables, scoping); never calls a handler."""
