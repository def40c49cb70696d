// A stub of the few UnityEngine/UnityEditor APIs the package's Unity-only code
// uses (Runtime/UnityLifecycle.cs, the Debug.LogWarning default of Bridge.Log,
// Editor/*.cs, the sample's IAPStoreExample.cs), with Unity's signatures, so
// run.sh can check they compile. Nothing here runs.
using System;

namespace AOT
{
    [AttributeUsage(AttributeTargets.Method)]
    public class MonoPInvokeCallbackAttribute : Attribute { public MonoPInvokeCallbackAttribute(Type type) { } }
}

namespace UnityEngine
{
    public class Object { }
    public class Component : Object { }
    public class Behaviour : Component { }
    public class MonoBehaviour : Behaviour { }
    public struct Rect { public Rect(float x, float y, float width, float height) { } }
    public sealed class GUILayoutOption { }

    public static class Debug
    {
        public static void Log(object message) { }
        public static void LogWarning(object message) { }
        public static void LogWarning(object message, Object context) { }
        public static void LogError(object message) { }
        public static void LogException(Exception exception) { }
    }

    public enum RuntimeInitializeLoadType { AfterSceneLoad, BeforeSceneLoad, AfterAssembliesLoaded, BeforeSplashScreen, SubsystemRegistration }

    [AttributeUsage(AttributeTargets.Method)]
    public class RuntimeInitializeOnLoadMethodAttribute : Attribute
    {
        public RuntimeInitializeOnLoadMethodAttribute() { }
        public RuntimeInitializeOnLoadMethodAttribute(RuntimeInitializeLoadType loadType) { }
    }

    public static class Application
    {
        public static string dataPath { get { return ""; } }
        public static string persistentDataPath { get { return ""; } }
        public static string streamingAssetsPath { get { return ""; } }
    }

    public static class Screen
    {
        public static int width { get { return 0; } }
        public static int height { get { return 0; } }
    }

    public static class GUILayout
    {
        public static void BeginArea(Rect screenRect) { }
        public static void EndArea() { }
        public static void Label(string text, params GUILayoutOption[] options) { }
        public static bool Button(string text, params GUILayoutOption[] options) { return false; }
    }
}

namespace UnityEditor
{
    public enum BuildTarget { StandaloneOSX = 2, iOS = 9, tvOS = 37 }

    [AttributeUsage(AttributeTargets.Method)]
    public class InitializeOnLoadMethodAttribute : Attribute { }

    public enum PlayModeStateChange { EnteredEditMode, ExitingEditMode, EnteredPlayMode, ExitingPlayMode }

    public static class AssemblyReloadEvents
    {
        public delegate void AssemblyReloadCallback();
        public static event AssemblyReloadCallback beforeAssemblyReload { add { } remove { } }
        public static event AssemblyReloadCallback afterAssemblyReload { add { } remove { } }
    }

    public static class EditorApplication
    {
        public static event Action quitting { add { } remove { } }
        public static event Action<PlayModeStateChange> playModeStateChanged { add { } remove { } }
    }
}

namespace UnityEditor.Build.Reporting
{
    public sealed class BuildReport { }
}

namespace UnityEditor.UnityLinker
{
    public sealed class UnityLinkerBuildPipelineData { }
}

namespace UnityEditor.Build
{
    public interface IOrderedCallback { int callbackOrder { get; } }

    // Only what the package needs. Editor/IAPBridgeLinkXml.cs also has OnBeforeRun/OnAfterRun as plain
    // methods, so it compiles whether or not a Unity version still declares them in the interface.
    public interface IUnityLinkerProcessor : IOrderedCallback
    {
        string GenerateAdditionalLinkXmlFile(UnityEditor.Build.Reporting.BuildReport report, UnityEditor.UnityLinker.UnityLinkerBuildPipelineData data);
    }
}

namespace UnityEditor.Callbacks
{
    [AttributeUsage(AttributeTargets.Method)]
    public class PostProcessBuildAttribute : Attribute { public PostProcessBuildAttribute(int callbackOrder) { } }
}

namespace UnityEditor.iOS.Xcode
{
    public enum PBXSourceTree { Absolute, Source, Group, Build, Developer, Sdk }

    public class PBXProject
    {
        public static string GetPBXProjectPath(string buildPath) { return ""; }
        public void ReadFromFile(string path) { }
        public void WriteToFile(string path) { }
        public string GetUnityFrameworkTargetGuid() { return ""; }
        public string FindFileGuidByProjectPath(string path) { return null; }
        public string AddFile(string path, string projectPath, PBXSourceTree sourceTree) { return ""; }
        public void AddFileToBuild(string targetGuid, string fileGuid) { }
        public void SetBuildProperty(string targetGuid, string name, string value) { }
        public void AddFrameworkToProject(string targetGuid, string framework, bool weak) { }
    }
}
