"""The one syntax layer: C, C++ and CUDA sources read through tree-sitter, for `init` (what a
kernel's arguments and launch are), the source moves (what a rewrite may change) and any other
reader of source.

- `tree`: the parser and the plain node helpers (text, lines, walk, names, calls, pragmas);
- `facts`: what a file declares (functions and their parameters, template parameters,
  `#ifndef` knobs, macros, typedefs, structs), as `init` reads it;
- `functions`: functions as nodes (names, bodies, parameters, the functions they call);
- `memory`: accesses through pointer parameters, `__shared__` arrays, lane-varying names, how
  an address moves with a set of names (read through the locals a body never changes);
- `roles`: each pointer parameter's role, by its first access in evaluation order (`init`);
- `index`: the global thread index (along any axis) and the grid-stride step;
- `element`: the one-thread-per-element shape (index, guard, work), and its 2-D form (a
  thread per element (x, y): two indices, their guard, the work);
- `loops`: how a loop steps its variables and what bounds it;
- `reductions`: what a loop accumulates (sums, minima, maxima) and how two parts combine;
- `launch`: how a kernel's threads map onto its work (one thread per element or row, V
  elements a thread, a grid-stride loop, a warp per row, a block per output, a 2-D tile),
  from which `init` drafts the launch.

The names most readers want are here at the top (`from pragma_ncu import syntax as ts`).
"""

from __future__ import annotations

from pragma_ncu.syntax.functions import (
    PointerParam,
    body,
    callees,
    declarator_of,
    function_name,
    function_named,
    functions,
    parameters,
    pointer_params,
    reached,
)
from pragma_ncu.syntax.index import (
    axis_of,
    block_offsets,
    grid_strided,
    index_name,
    is_global_index,
)
from pragma_ncu.syntax.memory import (
    TYPE_BYTES,
    Access,
    SharedArray,
    accesses,
    address,
    address_stride,
    bare,
    changed_names,
    depends_on,
    derived_pointers,
    fixed_values,
    is_shared,
    lane_dependent,
    lane_varying,
    shared_arrays,
    stride,
    walks_contiguous,
)
from pragma_ncu.syntax.tree import (
    FUNCTION_SCOPES,
    LOOPS,
    SYNCING,
    Node,
    assigned,
    call_names,
    compact,
    declarators,
    enclosing,
    first_line,
    identifiers,
    indentation,
    inside,
    language_of,
    last_line,
    line_of,
    masked,
    mentions,
    node_text,
    pragma_before,
    statements,
    strip_comments,
    substituted,
    syntax_tree,
    text,
    uses_builtin,
    walk,
)

__all__ = [
    "FUNCTION_SCOPES", "LOOPS", "SYNCING", "TYPE_BYTES", "Access", "Node", "PointerParam",
    "SharedArray", "accesses", "address", "address_stride", "axis_of", "bare", "assigned",
    "block_offsets", "body", "call_names", "callees", "changed_names", "compact",
    "declarator_of", "declarators", "depends_on", "derived_pointers", "enclosing", "first_line",
    "fixed_values", "function_name", "function_named", "functions", "grid_strided",
    "identifiers", "indentation", "index_name", "inside", "is_global_index", "is_shared",
    "lane_dependent", "lane_varying", "language_of", "last_line", "line_of", "masked", "mentions",
    "node_text", "parameters", "pointer_params", "pragma_before", "reached", "shared_arrays",
    "stride", "walks_contiguous", "statements", "strip_comments", "substituted", "syntax_tree",
    "text", "uses_builtin", "walk",
]
