"""The one syntax layer: C, C++ and CUDA sources read through tree-sitter, for `init` (what a
kernel's arguments and launch are), the source moves (what a rewrite may change) and any other
reader of source.

- `tree`: the parser and the plain node helpers (text, lines, walk, names, calls, pragmas);
- `facts`: what a file declares (functions and their parameters, template parameters,
  `#ifndef` knobs, macros, typedefs, structs), as `init` reads it;
- `functions`: functions as nodes (names, bodies, parameters, the functions they call);
- `memory`: accesses through pointer parameters, `__shared__` arrays, lane-varying names,
  how an address moves as names step (read through the locals a body never changes);
- `roles`: each pointer parameter's role, by its first access in evaluation order (`init`);
- `index`: the global thread index (along any axis), the grid-stride step, the reads of the
  built-in indices in every dimension, and a flat index split into two coordinates by `%`
  and `/`;
- `element`: the one-thread-per-element shape (index, guard, work), its 2-D form (a thread
  per element (x, y): two indices, their guard, the work), and the guard of any coordinates;
- `loops`: how a loop steps its variables and what bounds it;
- `reductions`: what a loop accumulates (sums, minima, maxima) and how two parts combine;
- `launch`: how a kernel's threads map onto its work (one thread per element or row, V
  elements a thread, a grid-stride loop, a warp per row, a block per output, a 2-D tile),
  from which `init` drafts the launch;
- `trees`: a block's shared-memory tree reductions, and what stands around one.

The names most readers want are here at the top (`from pragma_ncu import syntax as ts`).
"""

from __future__ import annotations

from pragma_ncu.syntax.functions import (
    PointerParam,
    body,
    callees,
    declarator_of,
    definition_start,
    function_name,
    function_named,
    functions,
    parameters,
    pointer_params,
    reached,
)
from pragma_ncu.syntax.index import (
    BUILTINS,
    Split,
    axis_of,
    block_offsets,
    builtin_reads,
    builtins_whole,
    grid_strided,
    index_name,
    is_global_index,
    split_index,
)
from pragma_ncu.syntax.memory import (
    TYPE_BYTES,
    Access,
    SharedArray,
    accesses,
    address,
    address_stride,
    address_strides,
    bare,
    changed_names,
    computed_from,
    depends_on,
    derived_pointers,
    fixed_values,
    is_shared,
    lane_dependent,
    lane_varying,
    shared_arrays,
    stride,
    walks_across,
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
    reads_first,
    statements,
    strip_comments,
    substituted,
    syntax_tree,
    text,
    uses_builtin,
    walk,
)

__all__ = [
    "Access", "BUILTINS", "FUNCTION_SCOPES", "LOOPS", "Node", "PointerParam", "SYNCING",
    "SharedArray", "Split", "TYPE_BYTES", "accesses", "address", "address_stride",
    "address_strides", "assigned", "axis_of", "bare", "block_offsets", "body", "builtin_reads",
    "builtins_whole", "call_names", "callees", "changed_names", "compact", "computed_from",
    "declarator_of", "declarators", "definition_start", "depends_on", "derived_pointers",
    "enclosing", "first_line",
    "fixed_values", "function_name", "function_named", "functions", "grid_strided", "identifiers",
    "indentation", "index_name", "inside", "is_global_index", "is_shared", "lane_dependent",
    "lane_varying", "language_of", "last_line", "line_of", "masked", "mentions", "node_text",
    "parameters", "pointer_params", "pragma_before", "reached", "reads_first", "shared_arrays",
    "split_index", "statements", "stride", "strip_comments", "substituted", "syntax_tree", "text",
    "uses_builtin", "walk", "walks_across", "walks_contiguous",
]
