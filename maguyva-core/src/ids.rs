//! Typed identifiers, so that a file id is never mistaken for a fragment id.

use serde::{Deserialize, Serialize};

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
        )]
        pub struct $name(pub u32);

        impl $name {
            /// The id as an index into a dense table.
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

id_type!(
    /// A file of the indexed corpus; dense, in path order.
    FileId
);
id_type!(
    /// A fragment (chunk) of a file; dense, in file then line order. Every
    /// modality refers to fragments by this id.
    ChunkId
);
id_type!(
    /// A definition in the symbol table of the structural modality.
    SymbolId
);
