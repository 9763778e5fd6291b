import SwiftyCacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One lock of the per-key write striping; its state counts the writes it serialized (a
/// zero-size state would confuse ThreadSanitizer's access tracking).
final class WriteStripe: Sendable {
    let lock = LockedState(0)
}
