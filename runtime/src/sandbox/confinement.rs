//! What a command the sandbox starts runs under: the answer of every platform's mechanism
//! ([`super::kernel`]), shared by the mechanisms themselves.

/// What a command runs under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confinement {
    /// Linux: a mount namespace hiding the deny list and the Landlock ruleset of the mode over
    /// whole trees.
    Namespace,
    /// Linux: the Landlock ruleset of the mode alone, split around the denied and protected
    /// paths (the fallback without user namespaces).
    Landlock,
    /// macOS: the Seatbelt profile of the mode.
    Seatbelt,
    /// Nothing: `full-access`, or no mechanism and `requireKernelSandbox` off.
    None,
}
