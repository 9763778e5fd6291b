/// A publish that failed, and whether it had already published some slots (then the entry can
/// hold neither its old values nor its new ones, and must be dropped).
struct PublishFailure: Error {
    var error: CacheError
    var publishedAny: Bool
}
