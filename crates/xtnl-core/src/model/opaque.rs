//! Parts of a rule that no model type expresses, kept by the backend that read them.
//!
//! The model does not know what they are: it prints them (`Display`), compares and clones
//! them, and marks the rule as not rewritable. Each backend keeps its own form inside and
//! reads it back with [`Opaque::parts`]: the nf_tables backend its expressions, the x_tables
//! backend the x_tables matches and targets it could not name. Neither has to describe its
//! leftovers in the other's terms.

use std::any::Any;
use std::fmt;

/// What a backend keeps inside an [`Opaque`]: any value that can be cloned, compared and
/// printed (implemented for every such type).
pub trait OpaqueParts: Any + fmt::Debug + fmt::Display + Send + Sync {
    /// A boxed copy.
    fn clone_parts(&self) -> Box<dyn OpaqueParts>;
    /// Whether `other` holds the same type and an equal value.
    fn eq_parts(&self, other: &dyn OpaqueParts) -> bool;
    /// For [`Opaque::parts`].
    fn as_any(&self) -> &dyn Any;
    /// For [`Opaque::parts_mut`].
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T> OpaqueParts for T
where
    T: Any + Clone + PartialEq + fmt::Debug + fmt::Display + Send + Sync,
{
    fn clone_parts(&self) -> Box<dyn OpaqueParts> {
        Box::new(self.clone())
    }
    fn eq_parts(&self, other: &dyn OpaqueParts) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// Parts of a rule as the backend that read them keeps them (see the module documentation).
pub struct Opaque(Box<dyn OpaqueParts>);

impl Opaque {
    /// Wraps a backend's own form of the parts.
    pub fn new(parts: impl OpaqueParts) -> Opaque {
        Opaque(Box::new(parts))
    }

    /// The parts, if the backend that made them used type `T`.
    pub fn parts<T: Any>(&self) -> Option<&T> {
        (*self.0).as_any().downcast_ref::<T>()
    }

    /// The parts, mutably, if the backend that made them used type `T`.
    pub fn parts_mut<T: Any>(&mut self) -> Option<&mut T> {
        (*self.0).as_any_mut().downcast_mut::<T>()
    }
}

impl Clone for Opaque {
    fn clone(&self) -> Self {
        Opaque((*self.0).clone_parts())
    }
}

impl PartialEq for Opaque {
    fn eq(&self, other: &Self) -> bool {
        (*self.0).eq_parts(&*other.0)
    }
}

impl Eq for Opaque {}

impl fmt::Debug for Opaque {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Opaque").field(&self.0).finish()
    }
}

impl fmt::Display for Opaque {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    struct A(u8);
    impl fmt::Display for A {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "a{}", self.0)
        }
    }
    #[derive(Debug, Clone, PartialEq)]
    struct B(u8);
    impl fmt::Display for B {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "b{}", self.0)
        }
    }

    #[test]
    fn parts_compare_print_and_come_back_by_type() {
        let mut a = Opaque::new(A(1));
        assert_eq!(a, Opaque::new(A(1)));
        assert_ne!(a, Opaque::new(A(2)));
        assert_ne!(a, Opaque::new(B(1)));
        assert_eq!(a.to_string(), "a1");
        assert_eq!(a.clone(), a);
        assert!(a.parts::<B>().is_none());
        a.parts_mut::<A>().unwrap().0 = 7;
        assert_eq!(a.parts::<A>(), Some(&A(7)));
    }
}
