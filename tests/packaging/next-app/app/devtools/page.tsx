import { DevtoolsDemo } from '../_shared/DevtoolsDemo';

// The devtools panel, <ProjectionDevtools /> (next.test.mjs: under next dev it explains; in the
// production builds it says it needs the development build).
export default function DevtoolsPage() {
  return <DevtoolsDemo variant="react" />;
}
