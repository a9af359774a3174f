import Foundation
import WaymarkCLI

var output = Output()
let code = CLI.run(Array(CommandLine.arguments.dropFirst()), output: &output)
FileHandle.standardOutput.write(Data(output.standardOutput.utf8))
FileHandle.standardError.write(Data(output.standardError.utf8))
exit(code.rawValue)
