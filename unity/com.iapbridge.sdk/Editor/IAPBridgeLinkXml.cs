// Editor-only: hands the package's link.xml to the Unity linker, so managed
// code stripping (IL2CPP, or Mono with stripping on) keeps the whole binding:
// the SDK calls OnSdkMessage from native code, and the message classes are
// filled by the binding's own reader. Unity reads link.xml files under
// Assets/ by itself; this makes sure the one inside the package counts too.
using System.IO;
using UnityEditor.Build;
using UnityEditor.Build.Reporting;
using UnityEditor.UnityLinker;

namespace IAPBridge.EditorTools
{
    public sealed class IAPBridgeLinkXml : IUnityLinkerProcessor
    {
        private const string LinkXml = "Packages/com.iapbridge.sdk/link.xml";

        public int callbackOrder { get { return 0; } }

        public string GenerateAdditionalLinkXmlFile(BuildReport report, UnityLinkerBuildPipelineData data)
        {
            return Path.GetFullPath(LinkXml);
        }

        // Part of the interface before Unity 2021.2; plain methods after it.
        public void OnBeforeRun(BuildReport report, UnityLinkerBuildPipelineData data) { }
        public void OnAfterRun(BuildReport report, UnityLinkerBuildPipelineData data) { }
    }
}
