/*
Copyright The Helm Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package version

// ferry: upstream (helm.sh/helm/v4@v4.3.1 internal/version/clientgo.go)
// blank-imports k8s.io/client-go/kubernetes (the whole clientset, about
// 270 packages) only so that k8s.io/client-go is in the binary's build
// info, and reads its module version from debug.ReadBuildInfo. The fork
// links no client-go: the version is the one go.mod requires, written by
// internal/cmd/helmkubegen into zz_generated_kube.go (a program that links
// the real Helm and reads it exactly as upstream does). The test
// TestKubeValuesMatchHelm fails when go.mod's client-go moves without
// regenerating.
//
//go:generate go run github.com/ferryhq/ferry/internal/cmd/helmkubegen -o ../..

// K8sIOClientGoModVersion returns the version of the k8s.io/client-go
// module the real Helm would find in ferry's build info.
//
// ferry: a constant written by internal/cmd/helmkubegen, never an error.
func K8sIOClientGoModVersion() (string, error) {
	return k8sIOClientGoModVersion, nil
}
