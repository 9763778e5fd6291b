#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The values of an entry read from memory only, or why they were not.
enum CachedValues {
    case found([Data])
    /// Missing or damaged: the read must go the full way to deal with it.
    case missing
    /// Reading them would wait for the disk.
    case notInMemory
}
