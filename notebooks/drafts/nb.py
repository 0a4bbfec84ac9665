"""Build a notebook from a plain text file: cells separated by lines '# %% [markdown]' or '# %%'.
Usage: python nb.py source.py out.ipynb"""
import sys, nbformat
src = open(sys.argv[1]).read()
cells, kind, buf = [], None, []
def flush():
    if kind is None: return
    text = "\n".join(buf).strip("\n")
    if kind == "md":
        text = "\n".join(l[2:] if l.startswith("# ") else ("" if l == "#" else l) for l in text.split("\n"))
        cells.append(nbformat.v4.new_markdown_cell(text))
    else:
        tags = []
        if text.startswith("# tags:"):
            first, _, text = text.partition("\n"); tags = first[7:].split()
        c = nbformat.v4.new_code_cell(text)
        if tags: c.metadata["tags"] = tags
        cells.append(c)
for line in src.split("\n"):
    if line.startswith("# %% [markdown]"):
        flush(); kind, buf = "md", []
    elif line.startswith("# %%"):
        flush(); kind, buf = "code", []
    else:
        buf.append(line)
flush()
nb = nbformat.v4.new_notebook(cells=cells)
nb.metadata = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
               "language_info": {"name": "python"}}
nbformat.write(nb, sys.argv[2])
