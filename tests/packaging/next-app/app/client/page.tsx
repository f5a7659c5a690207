import { ProjectionDemo } from '../_shared/ProjectionDemo';

export default function ClientPage() {
  return <ProjectionDemo title="Next.js client component" mode="static" />;
}
