#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What reading a record found.
enum RecordRead {
    case found(RecordBytes)
    /// Missing or damaged.
    case missing
    /// Reading it would wait for the disk (its segment not open, or its bytes not in the page
    /// cache): nothing was done.
    case notInMemory
}
