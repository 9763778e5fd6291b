#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The key strategies: coding keys to member names and back, by Foundation's rules.
enum JSONKeyConversion {
    /// The member name of `key` under `strategy`; `path` is the coding path of its container.
    static func encodedName(
        of key: some CodingKey, path: [any CodingKey], _ strategy: JSONEncoder.KeyEncodingStrategy
    ) -> String {
        switch strategy {
        case .useDefaultKeys: key.stringValue
        case .convertToSnakeCase: snakeCase(key.stringValue)
        case .custom(let convert): convert(path + [key]).stringValue
        @unknown default: key.stringValue
        }
    }

    /// `myURLValue` → `my_url_value`: a word starts at an uppercase letter, and a run of
    /// uppercase letters is one word, except its last letter when a lowercase one follows.
    static func snakeCase(_ name: String) -> String {
        let scalars = Array(name.unicodeScalars)
        guard scalars.count > 1 else { return name }
        var words: [Range<Int>] = []
        var wordStart = 0
        var index = 1
        while index < scalars.count {
            guard scalars[index].properties.isUppercase else {
                index += 1
                continue
            }
            words.append(wordStart..<index)
            // The run of capitals from `index`, up to the next lowercase letter.
            var lower = index + 1
            while lower < scalars.count, !scalars[lower].properties.isLowercase { lower += 1 }
            guard lower < scalars.count else {
                wordStart = index
                index = scalars.count
                break
            }
            if lower == index + 1 {
                wordStart = index
            } else {
                words.append(index..<(lower - 1))
                wordStart = lower - 1
            }
            index = lower + 1
        }
        words.append(wordStart..<scalars.count)
        return words.map { range in
            var word = String.UnicodeScalarView()
            word.append(contentsOf: scalars[range])
            return String(word).lowercased()
        }.joined(separator: "_")
    }

    /// `my_url_value` → `myUrlValue`: leading and trailing underscores kept, a name without an
    /// inner underscore left as it is.
    static func camelCase(fromSnakeCase name: String) -> String {
        guard let first = name.firstIndex(where: { $0 != "_" }) else { return name }
        guard let last = name.lastIndex(where: { $0 != "_" }) else { return name }
        let core = name[first...last]
        let words = core.split(separator: "_")
        guard words.count > 1 else { return name }
        var result = String(name[..<first])
        result += words[0].lowercased()
        for word in words.dropFirst() {
            result += word.prefix(1).uppercased() + word.dropFirst().lowercased()
        }
        result += name[name.index(after: last)...]
        return result
    }
}
