/// A coding key the coders make themselves: an array index in a coding path (`"Index 3"`, as
/// Foundation names it), a member found in a JSON object, `super`.
struct JSONKey: CodingKey, Sendable {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    init(intValue: Int) {
        self.stringValue = "\(intValue)"
        self.intValue = intValue
    }

    /// The key of element `index` of an array.
    init(index: Int) {
        self.stringValue = "Index \(index)"
        self.intValue = index
    }

    /// The key `superEncoder()` and `superDecoder()` use.
    static let `super` = JSONKey(stringValue: "super")
}

/// Dictionaries keyed by `String`: their keys are data, not coding keys, so no key strategy
/// converts them (Foundation's rule).
protocol JSONStringKeyedDictionary {}

extension Dictionary: JSONStringKeyedDictionary where Key == String {}
