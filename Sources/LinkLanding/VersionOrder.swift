/// Which of two app versions is older: compared part by part, split at `.`, `-`, `+` and
/// `_`; numeric parts as numbers, others as text, a number newer than text; when one runs
/// out, a following text part (a pre-release tag: `5.3.0-beta`) is older and a following
/// number (`5.3.0.1`) newer.
public enum VersionOrder {
    public static func precedes(_ a: String, _ b: String) -> Bool {
        let left = parts(a), right = parts(b)
        for (x, y) in zip(left, right) where x != y {
            switch (Int(x), Int(y)) {
            case let (p?, q?): if p != q { return p < q }
            case (nil, _?): return true
            case (_?, nil): return false
            case (nil, nil): return x < y
            }
        }
        if left.count == right.count { return false }
        if left.count < right.count { return Int(right[left.count]) != nil }
        return Int(left[right.count]) == nil
    }

    private static func parts(_ version: String) -> [Substring] {
        version.split { ".-+_".contains($0) }
    }
}
