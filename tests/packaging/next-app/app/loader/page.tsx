import { ProjectionDemo } from '../_shared/ProjectionDemo';

export default function LoaderPage() {
  return <ProjectionDemo title="Next.js client component (loadTaskProjection)" mode="loader" />;
}
