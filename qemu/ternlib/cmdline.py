"""Quoting words for the kernel's command-line splitter (kernel/boot.c:
spaces separate words, "..." groups, backslash escapes the next byte)."""


def quote_word(word):
    if word and not any(c in word for c in ' \t\n"\\'):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


def join_words(words):
    return " ".join(quote_word(w) for w in words)
