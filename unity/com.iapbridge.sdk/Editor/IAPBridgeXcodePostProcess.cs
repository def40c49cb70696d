// Editor-only (this folder is named Editor): after Unity writes the Xcode
// project for iOS, make it link what libIAPBridgeStatic.a needs (the
// package ships no tvOS library).
//
// The static library is Swift: Xcode links the Swift runtime only into
// targets that compile Swift, so this adds one empty Swift file to the
// UnityFramework target, sets a Swift version, and links StoreKit.
#if UNITY_IOS
using System.IO;
using UnityEditor;
using UnityEditor.Callbacks;
using UnityEditor.iOS.Xcode;

namespace IAPBridge.EditorTools
{
    public static class IAPBridgeXcodePostProcess
    {
        private const string SwiftFile = "Libraries/IAPBridgeSwiftRuntime.swift";

        [PostProcessBuild(100)]
        public static void OnPostProcessBuild(BuildTarget target, string buildPath)
        {
            if (target != BuildTarget.iOS) return;
            string projectPath = PBXProject.GetPBXProjectPath(buildPath);
            var project = new PBXProject();
            project.ReadFromFile(projectPath);
            string framework = project.GetUnityFrameworkTargetGuid();

            File.WriteAllText(Path.Combine(buildPath, SwiftFile),
                "// Added by IAPBridge: makes Xcode link the Swift runtime libIAPBridgeStatic.a needs.\n");
            if (project.FindFileGuidByProjectPath(SwiftFile) == null) // "Append" builds keep the old project
                project.AddFileToBuild(framework, project.AddFile(SwiftFile, SwiftFile, PBXSourceTree.Source));
            project.SetBuildProperty(framework, "SWIFT_VERSION", "5.0");
            project.AddFrameworkToProject(framework, "StoreKit.framework", false);
            project.WriteToFile(projectPath);
        }
    }
}
#endif
