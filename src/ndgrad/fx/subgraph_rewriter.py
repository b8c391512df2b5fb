def replace_pattern(gm, pattern, replacement):
    raise NotImplementedError
